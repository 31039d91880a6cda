"""`helper eval requests`: a benchmark of everyday requests, scored by TEACh's checker.

Does the agent do what was asked, only that, hear corrections, replay what it was taught, and say
no to what cannot be done? Each case is a request in a person's own words in a generated household
(`cases.py`), acted on by any harness agent (the CLI hands it `helper chat`'s runtime) with a
scripted person answering the feedback question from what the checker sees (`person.py`); the
final household is checked against the case's goal and compared with the first (`scope.py`), and
the reply's claim is read in one place (`claims.py`). `run.py` runs a suite resumably and writes
the eight figures.
"""

from helper_agent.evals.studies.requests.cases import (
    SUITES,
    Goal,
    Household,
    RequestCase,
    RequestSuite,
    SuiteFileError,
    load_suite,
    suite_path,
)
from helper_agent.evals.studies.requests.run import METRICS, metrics, run_case, run_suite, score_case

__all__ = [
    "METRICS",
    "SUITES",
    "Goal",
    "Household",
    "RequestCase",
    "RequestSuite",
    "SuiteFileError",
    "load_suite",
    "metrics",
    "run_case",
    "run_suite",
    "score_case",
    "suite_path",
]
