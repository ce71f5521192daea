"""A family module whose own import fails: the simulator must not hide it as "not landed"."""

import permitapi.no_such_module  # noqa: F401
