"""EPIC-LA family: LA County Public Works (ArcGIS Case History layer + EnerGov Self Service)."""
