"""Status lookups: GET status and POST batch-status, with cache, single-flight refresh from the
portal, metering and the status record they answer."""
