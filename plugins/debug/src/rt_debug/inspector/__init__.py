"""The inspector of ``rt run --inspect``: the WebKit Inspector Protocol (JSON over WebSocket) for Python programs.

- :mod:`.address`: what ``--inspect[=VALUE]`` means (host, port, the secret path);
- :mod:`.endpoints`: the HTTP side, sans-I/O (``/json/version``, ``/json/list``, Host and Origin checks);
- :mod:`.remote`: Python values as protocol ``RemoteObject`` s, kept by id until released;
- :mod:`.tracer`: breakpoints, stepping and pausing the main thread (``sys.settrace``, files with breakpoints only);
- :mod:`.session`: the protocol methods, dispatched to the tracer and the object table;
- :mod:`.console`: ``print`` and ``logging`` as ``Console.messageAdded``;
- :mod:`.server`: rt-http's server on a thread of its own, with its own event loop, and the banner.
"""
