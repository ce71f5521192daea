"""Discovery: live permit search across LADBS and EPIC-LA."""
