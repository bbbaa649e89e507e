"""The official Python client's proof verifiers (clients/python/src/openstartup/verify.py,
written separately from the server's transparency/merkle.py), loaded by path for the tests
that check the server's proofs with them."""

import importlib.util
import sys
from pathlib import Path

_VERIFY = Path(__file__).resolve().parents[2] / "clients/python/src/openstartup/verify.py"


def _client_verify():
    # The client package is also called `openstartup`: load its module by path.
    spec = importlib.util.spec_from_file_location("openstartup_client_verify", _VERIFY)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


verify = _client_verify()
