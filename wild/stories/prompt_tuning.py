"""stub"""

from collections.abc import Sequence

from wild.stories.analysis import Analysis
from wild.stories.results import RunResult


def analyze(runs: Sequence[RunResult], human: str = "") -> Analysis:
    raise NotImplementedError
