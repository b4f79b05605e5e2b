"""permessage-deflate (RFC 7692) for ``rt.serve``: the ``per_message_deflate`` option, the handshake
negotiation, and the per-socket compression state.

Behaviour follows REFERENCE.md: ``dedicated`` and ``256KB`` answer ``permessage-deflate;
client_no_context_takeover``, smaller compressors add ``server_max_window_bits``, ``shared`` is one
compressor for every socket, reset after each message, and a malformed offer is declined (no extension, so
RSV1 is never set). Inflating is bounded by ``max_payload_length``: a small frame cannot become a huge
allocation.
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from rt.interfaces import Compressor, CompressorFactory, CompressorOptions

_TAIL = b"\x00\x00\xff\xff"  # RFC 7692 7.2.1: stripped after compressing, appended before inflating

# Compressor name -> (window bits, memLevel), as in the reference runtime (uWebSockets).
SIZED = {
    "3KB": (9, 1),
    "4KB": (9, 2),
    "8KB": (10, 3),
    "16KB": (11, 4),
    "32KB": (12, 5),
    "64KB": (13, 6),
    "128KB": (14, 7),
    "256KB": (15, 8),
    "dedicated": (15, 8),
}
COMPRESSORS = ("disable", "shared", *SIZED)
# Every built-in name is one zlib compressor, sized by the table above at negotiation; rt-http registers them
# through rt_register_compressors, where a plugin can add others (a faster deflate, say) by name.
BUILTIN_NAMES = ("shared", *SIZED)


class InflateError(Exception):
    """The peer sent compressed data that does not inflate."""


class Deflater:
    """Compresses whole messages. ``keep_context=False`` flushes with Z_FULL_FLUSH, so no message refers
    back to an earlier one (``server_no_context_takeover``, and the ``shared`` compressor)."""

    __slots__ = ("_compressor", "_flush")

    def __init__(self, window_bits: int = 15, mem_level: int = 8, keep_context: bool = True) -> None:
        self._compressor = zlib.compressobj(
            zlib.Z_DEFAULT_COMPRESSION, zlib.DEFLATED, -window_bits, mem_level
        )
        self._flush = zlib.Z_SYNC_FLUSH if keep_context else zlib.Z_FULL_FLUSH

    def compress(self, data: bytes) -> bytes:
        out = self._compressor.compress(data) + self._compressor.flush(self._flush)
        return out[:-4] if out.endswith(_TAIL) else out


class Inflater:
    """Inflates whole messages; a fresh window per message unless the context is kept."""

    __slots__ = ("_bits", "_decompressor", "_keep")

    def __init__(self, keep_context: bool, window_bits: int = 15) -> None:
        """``window_bits``: the client's window as negotiated (``client_max_window_bits``); a peer that
        refers further back than it agreed to fails to inflate instead of costing a bigger window."""
        self._keep = keep_context
        self._bits = window_bits
        self._decompressor = zlib.decompressobj(-window_bits)

    def inflate(self, data: bytes, max_size: int) -> bytes | None:
        """The message, or None when it would exceed ``max_size`` bytes (checked while inflating)."""
        decompressor = self._decompressor if self._keep else zlib.decompressobj(-self._bits)
        try:
            out = decompressor.decompress(data + _TAIL, max_size + 1)
        except zlib.error as exc:
            raise InflateError(str(exc)) from None
        if len(out) > max_size or decompressor.unconsumed_tail:
            return None
        return out


class ZlibCompressor:
    """The built-in compressor (the kernel's ``Compressor`` protocol) on zlib: what every built-in
    ``per_message_deflate`` value selects, sized by its window bits and memLevel. One object serves one
    direction of one connection (or, for ``shared``, every connection's sending direction)."""

    __slots__ = ("_deflater", "_inflater", "_options")

    def __init__(self, options: CompressorOptions) -> None:
        self._options = options
        self._deflater: Deflater | None = None
        self._inflater: Inflater | None = None

    def compress(self, data: bytes) -> bytes:
        if self._deflater is None:
            o = self._options
            self._deflater = Deflater(o.window_bits, o.mem_level, keep_context=not o.no_context_takeover)
        return self._deflater.compress(data)

    def decompress(self, data: bytes, max_size: int) -> bytes:
        """The message; ``ValueError`` past ``max_size`` bytes, :class:`InflateError` for corrupt data."""
        if self._inflater is None:
            o = self._options
            self._inflater = Inflater(not o.no_context_takeover, o.window_bits)
        out = self._inflater.inflate(data, max_size)
        if out is None:
            raise ValueError(f"message inflates past {max_size} bytes")
        return out

    def reset(self) -> None:
        self._deflater = self._inflater = None


def builtin_compressor(options: CompressorOptions) -> ZlibCompressor:
    """The factory every built-in name is registered with (rt-http's ``rt_register_compressors``)."""
    return ZlibCompressor(options)


def _mode(value: Any, key: str) -> str:
    if value is True:
        return "shared"
    if value is False or value is None:
        return "disable"
    if isinstance(value, str) and value:  # a built-in name or a registered one (checked by resolve)
        return value
    raise ValueError(
        f"per_message_deflate[{key!r}] must be a bool or one of {', '.join(COMPRESSORS)} "
        f"(or a compressor a plugin registers); got {value!r}"
    )


@attrs.frozen
class DeflateConfig:
    """The server-wide choice: which compressor and decompressor, and the one ``shared`` compressor."""

    compress: str
    decompress: str
    # name -> factory, from the kernel's rt_register_compressors (resolve); the built-ins until then
    factories: dict[str, CompressorFactory] = attrs.field(factory=lambda: dict(BUILTIN_FACTORIES), eq=False)
    shared: Compressor = attrs.field(eq=False)
    # negotiated key -> (answer, Session), filled by negotiate(): bounded (see _accept), shared by all sockets
    sessions: dict[tuple[bool, bool, bool, int, bool, int, bool], tuple[str, Session]] = attrs.field(
        init=False, factory=dict, eq=False
    )

    @shared.default
    def _shared(self) -> Compressor:
        """One compressor for every socket, reset after each message: window 15, no context kept."""
        return self.factories.get("shared", builtin_compressor)(
            CompressorOptions(window_bits=15, mem_level=8, no_context_takeover=True)
        )

    def resolve(self, registered: Mapping[str, Any]) -> DeflateConfig:
        """This choice with its compressors taken from a kernel's registry (``host.compressors()``); an
        unknown name is a clear error, raised when the server starts."""
        factories = {name: entry.value for name, entry in registered.items()}
        for key, name in (("compress", self.compress), ("decompress", self.decompress)):
            if name != "disable" and name not in factories:
                known = ", ".join(["disable", *sorted(factories)])
                raise ValueError(
                    f"per_message_deflate[{key!r}]: no compressor named {name!r}; registered: {known}"
                )
        return DeflateConfig(self.compress, self.decompress, factories)

    @classmethod
    def parse(cls, value: Any) -> DeflateConfig | None:
        """``per_message_deflate``: False/None (off), True (shared both ways), or a dict with the keys
        ``compress`` and ``decompress``."""
        if value is False or value is None:
            return None
        if value is True:
            return cls("shared", "shared")
        if isinstance(value, dict):
            unknown = set(value) - {"compress", "decompress"}
            if unknown:
                raise ValueError(
                    "per_message_deflate takes the keys compress and decompress, "
                    f"got {', '.join(sorted(unknown))}"
                )
            config = cls(
                _mode(value.get("compress"), "compress"), _mode(value.get("decompress"), "decompress")
            )
            return None if config.compress == config.decompress == "disable" else config
        raise TypeError(
            "per_message_deflate must be a bool or a dict with compress/decompress, "
            f"got {type(value).__name__}"
        )


# ``decompress`` sizes that limit the client's window (REFERENCE.md): client_max_window_bits, when offered
CLIENT_WINDOW = {"3KB": 11, "4KB": 12, "8KB": 13, "16KB": 14}


@attrs.frozen(slots=True)
class Session:
    """What permessage-deflate negotiated for a connection: how its frames are compressed and inflated.

    ``deflater`` and ``inflater`` are ready-made compressors: the server's one ``shared`` compressor, or (for
    rt's client) a connection's own pair. ``deflate_with`` and ``inflate_with`` make a socket's own compressor
    instead; the socket's :class:`~rt_http.protocol.WebSocketProtocol` calls them on its first compressed
    message, so a socket that never sends or receives one holds no compressor at all. A Session holds nothing
    per socket: the server makes one per distinct negotiated answer and every socket that got that answer
    shares it (docs/benchmarks.md: an idle socket costs the same with compression on as off).
    """

    deflater: Compressor | None  # ready-made (None: see deflate_with; both None: this side does not compress)
    inflater: Compressor | None  # ready-made (None: see inflate_with)
    shared: bool  # ``deflater`` is the server's shared one (window 15, no context): one frame fits all
    deflate_with: Callable[[], Compressor] | None = None
    inflate_with: Callable[[], Compressor] | None = None

    @property
    def compresses(self) -> bool:
        """This side sends compressed frames when asked to."""
        return self.deflater is not None or self.deflate_with is not None


def _parse_offer(text: str) -> tuple[str, dict[str, str | None]] | None:
    """One extension offer: its name and parameters; None when a parameter repeats or is malformed."""
    name, *parts = (part.strip() for part in text.split(";"))
    params: dict[str, str | None] = {}
    for part in parts:
        key, sep, raw = part.partition("=")
        key = key.strip().lower()
        if not key or key in params:
            return None
        value = raw.strip().strip('"') if sep else None
        if sep and not value:
            return None
        params[key] = value
    return name.lower(), params


def _bits(value: str | None) -> int | None:
    if value is None or not value.isdigit() or not 8 <= int(value) <= 15:
        return None
    return int(value)


# The server side negotiates here rather than with websockets' ServerPerMessageDeflateFactory (which the
# client side, rt_http.client_handshake, does use): the reference runtime's answers are a policy of their own
# that the factory cannot express: `dedicated`/`256KB` always answer client_no_context_takeover, each sized
# compressor announces its server_max_window_bits unasked, `3KB`..`16KB` as decompress cap the client's window
# only when offered, and a malformed offer is declined silently instead of failing the handshake
# (REFERENCE.md). The factory's parameter checks are what rt's client reuses.
def negotiate(config: DeflateConfig, header: str | None) -> tuple[str, Session] | None:
    """The ``Sec-WebSocket-Extensions`` answer and the socket's state, for the first acceptable offer."""
    for offer in (header or "").split(","):
        parsed = _parse_offer(offer)
        if parsed is None or parsed[0] != "permessage-deflate":
            continue
        accepted = _accept(config, parsed[1])
        if accepted is not None:
            return accepted
    return None


def _accept(config: DeflateConfig, params: dict[str, str | None]) -> tuple[str, Session] | None:
    known = {
        "server_no_context_takeover",
        "client_no_context_takeover",
        "server_max_window_bits",
        "client_max_window_bits",
    }
    if set(params) - known:
        return None
    for flag in ("server_no_context_takeover", "client_no_context_takeover"):
        if params.get(flag, None) is not None:
            return None  # these take no value
    server_bits = 15
    if "server_max_window_bits" in params:
        offered = _bits(params["server_max_window_bits"])
        if offered is None or offered == 8:  # zlib cannot deflate raw data with a 256-byte window
            return None
        server_bits = offered
    client_bits = 15
    if "client_max_window_bits" in params:
        offered_client = params["client_max_window_bits"]
        if offered_client is not None:
            parsed_bits = _bits(offered_client)
            if parsed_bits is None:
                return None
            client_bits = parsed_bits

    shared = config.compress == "shared" and server_bits == 15
    server_no_context = config.compress == "shared" or "server_no_context_takeover" in params
    keep_client_context = config.decompress not in ("disable", "shared") and (
        "client_no_context_takeover" not in params
    )
    bits = min(SIZED.get(config.compress, (15, 8))[0], server_bits)
    # an offered limit must be answered (7.1.2.1); otherwise a sized compressor announces its window unasked
    announce_bits = bits < 15 or "server_max_window_bits" in params
    inflate_bits = 15  # a window the client was not told to keep to: inflate with the largest
    limit = CLIENT_WINDOW.get(config.decompress)
    answer_client_bits = False
    if limit is not None and "client_max_window_bits" in params:  # only an offered one may be answered
        inflate_bits, answer_client_bits = min(client_bits, limit), True
    # Everything below follows from this key alone, a small finite set: one answer and one Session per key,
    # shared by every socket that negotiates it (nothing per socket until it compresses or inflates).
    key = (
        shared,
        server_no_context,
        keep_client_context,
        bits,
        announce_bits,
        inflate_bits,
        answer_client_bits,
    )
    cached = config.sessions.get(key)
    if cached is None:
        cached = config.sessions[key] = _session(config, key)
    return cached


def _session(
    config: DeflateConfig, key: tuple[bool, bool, bool, int, bool, int, bool]
) -> tuple[str, Session]:
    """The answer and the Session for one negotiated key (see :func:`_accept`)."""
    shared, server_no_context, keep_client_context, bits, announce_bits, inflate_bits, answer_client_bits = (
        key
    )
    answer = ["permessage-deflate"]
    if server_no_context:
        answer.append("server_no_context_takeover")
    if not keep_client_context:
        answer.append("client_no_context_takeover")
    if announce_bits:
        answer.append(f"server_max_window_bits={bits}")
    if answer_client_bits:
        answer.append(f"client_max_window_bits={inflate_bits}")
    deflater: Compressor | None = None
    deflate_with: Callable[[], Compressor] | None = None
    if shared:
        deflater = config.shared
    elif config.compress != "disable":
        mem_level = SIZED.get(config.compress, (15, 8))[1]
        deflate_with = functools.partial(
            config.factories.get(config.compress, builtin_compressor),
            CompressorOptions(bits, mem_level, no_context_takeover=server_no_context),
        )
    inflate_with = functools.partial(
        config.factories.get(config.decompress, builtin_compressor),
        CompressorOptions(inflate_bits, 8, no_context_takeover=not keep_client_context),
    )
    return "; ".join(answer), Session(deflater, None, shared, deflate_with, inflate_with)


BUILTIN_FACTORIES: dict[str, CompressorFactory] = dict.fromkeys(BUILTIN_NAMES, builtin_compressor)
