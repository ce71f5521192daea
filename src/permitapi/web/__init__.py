"""HTTP plumbing shared by every router: request ids, problems, auth, headers, docs."""
