# SPDX-License-Identifier: Apache-2.0
"""The report of a run and the comparison of runs, built only from the files a run directory holds.

    data      reads the run's results files into their typed records (hdbbench.results.kinds), and the run's facts
    ranking   multi-criteria ranking of the backends (criteria, weights, scores)
    criteria  the criteria's figures per backend from a run's results files
    text      words generated from the numbers (findings, spreads, formatting)
    plots     inline SVG figures (matplotlib, loaded only here)
    page      the sections of ``report.html`` and ``write_report``
    render    HTML of sections, tables and findings (shared by page and compare)
    compare   ``hdbbench compare``: the same figures across runs
"""
