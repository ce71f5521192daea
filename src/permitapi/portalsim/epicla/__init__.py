"""Simulated EPIC-LA: ArcGIS Case History layer + EnerGov Self Service JSON API."""

from permitapi.portalsim.epicla.family import EpicLaFamily

__all__ = ["EpicLaFamily"]
