"""The playground: a page, served by the service itself, to try a lookup without reading docs."""
