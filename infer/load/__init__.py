"""Reading a model: the loader, the wire format, node views, the pre-scan, UTF-8 and external data.
Above the core only."""
