"""UUID text from the engine's seeded bits, without importing ``uuid`` (it loads ``platform``)."""

from __future__ import annotations

_VERSION_MASK = ~(0xF000 << 64) & ~(0xC000 << 48)


def uuid_text(value: int) -> str:
    """A 128-bit integer as UUID text: the same string as ``str(uuid.UUID(int=value))``."""
    text = f"{value:032x}"
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def uuid4_bits(value: int) -> int:
    """Set the version (4) and variant (RFC 4122) bits, as ``uuid.UUID(int=..., version=4)``."""
    return (value & _VERSION_MASK) | (0x8000 << 48) | (4 << 76)
