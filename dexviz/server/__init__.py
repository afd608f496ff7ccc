"""Read run histories from a Dex server over gRPC (the optional ``server`` extra).

``with dexviz.connect("host:port") as server: history = server.history(flow_id)`` gives a
History every view reads. grpcio is imported when a connection is made, so importing this
package works without the extra.
"""

from dexviz.server.client import DexServer, connect
from dexviz.server.errors import (
    DexFlowNotFoundError,
    DexHistoryPageError,
    DexServerError,
    DexServerTimeoutError,
    DexServerUnavailableError,
    ServerExtraMissingError,
)

__all__ = [
    "DexFlowNotFoundError", "DexHistoryPageError", "DexServer", "DexServerError",
    "DexServerTimeoutError", "DexServerUnavailableError", "ServerExtraMissingError", "connect",
]  # fmt: skip
