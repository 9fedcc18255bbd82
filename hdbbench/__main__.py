# SPDX-License-Identifier: Apache-2.0
"""`python -m hdbbench` is the `hdbbench` command."""
from hdbbench.cli import run

run()
