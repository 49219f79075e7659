"""The run's shared searches: tests/trace_helpers.py's config_search makes each once a test run,
shared by pytest-xdist's workers through the run's temporary directory."""

import pytest

from tests import trace_helpers


@pytest.fixture(scope="session", autouse=True)
def shared_searches(tmp_path_factory):
    trace_helpers.SHARED_RUN = tmp_path_factory
    yield
    trace_helpers.SHARED_RUN = None
