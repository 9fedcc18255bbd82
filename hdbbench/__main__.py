# SPDX-License-Identifier: Apache-2.0
"""`python -m hdbbench` is the `hdbbench` command."""
from hdbbench.cli import run

if __name__ == "__main__":  # not when a spawned process (hdbbench.parts.side_by_side) imports it as its parent's main
    run()
