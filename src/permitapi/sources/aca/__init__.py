"""Accela Citizen Access (ACA): one adapter for every `aca:<code>` agency.

ACA is an ASP.NET WebForms application. A lookup is a short conversation with one session:
GET the search page (CapHome.aspx), POST the general search back with every hidden field,
follow the one-result redirect or pick the row from the results grid, GET the record page
(CapDetail.aspx), then POST the `GetProcessingData` page method for the workflow. Parsing is
pure functions over saved pages (`pages`, `results`, `detail`, `processing`, `inspections`);
`adapter` holds the conversation.
"""
