"""What the service shows its operators: Prometheus metrics and structured logs."""
