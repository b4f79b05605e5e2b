"""Hook implementations of rt-redis: the entry point `redis` in group `rt` names this module.

Keep imports here light: the kernel imports this module when the first `rt.` name is used; anyio, hiredis
and redis are imported only when a server is started with a ``redis://`` broker.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rt.hookspecs import hookimpl
from rt.interfaces import ConfigOption

if TYPE_CHECKING:
    from rt.config import Config
    from rt.interfaces import Broker, BrokerFactory

MIB = 1024 * 1024


@hookimpl
def rt_register_config_options(register: Callable[[ConfigOption], None]) -> None:
    register(
        ConfigOption(
            "redis",
            "channel_prefix",
            str,
            "rt:",
            help="prefix of the Redis channel of each topic (pub/sub ignores the db number)",
        )
    )
    register(
        ConfigOption(
            "redis",
            "max_message_bytes",
            int,
            1 * MIB,
            help="largest payload published through Redis; larger publishes raise ValueError",
        )
    )
    register(
        ConfigOption(
            "redis",
            "max_pending_bytes",
            int,
            16 * MIB,
            help="bytes queued for a slow Redis before further publishes are dropped and counted",
        )
    )


def _redis_broker(url: str, config: Config) -> Broker:
    from rt_redis.broker import RedisBroker

    return RedisBroker(
        url,
        channel_prefix=config.get("redis.channel_prefix", "rt:"),
        max_message_bytes=config.get("redis.max_message_bytes", MIB),
        max_pending_bytes=config.get("redis.max_pending_bytes", 16 * MIB),
    )


@hookimpl
def rt_register_brokers(register: Callable[[str, BrokerFactory], None]) -> None:
    register("redis", _redis_broker)
    register("rediss", _redis_broker)  # TLS
