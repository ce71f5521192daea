"""Where each portal family's adapter and simulator live. Imported lazily by name, so a family
package is loaded only when a jurisdiction of that family is used."""

from __future__ import annotations

import importlib
from typing import Any

ADAPTERS = {
    "ladbs": "permitapi.sources.ladbs.adapter:LadbsAdapter",
    "epicla": "permitapi.sources.epicla.adapter:EpicLaAdapter",
    "aca": "permitapi.sources.aca.adapter:AcaAdapter",
}
SIMULATORS = {
    "ladbs": "permitapi.portalsim.ladbs:LadbsFamily",
    "epicla": "permitapi.portalsim.epicla:EpicLaFamily",
    "aca": "permitapi.portalsim.aca:AcaFamily",
}


def load(path: str) -> Any:
    module_name, _, attribute = path.partition(":")
    return getattr(importlib.import_module(module_name), attribute)
