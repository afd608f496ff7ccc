"""Mirror of ``dex._grpc_errors``: examples import ``retry_after`` from this private path."""

from dexviz.sdk.errors import RetryAfterError, retry_after

__all__ = ["RetryAfterError", "retry_after"]
