"""Fixtures of the Dex server tests: the gRPC stand-in, when grpcio is installed."""

import importlib.util

if importlib.util.find_spec("grpc") is not None:
    from tests.server.fake_dex import fake_dex  # noqa: F401
