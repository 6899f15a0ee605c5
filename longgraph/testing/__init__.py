"""Test doubles that speak real HTTP, so graphs can be exercised without a model and with injected faults."""
