"""The demo dataset: fictional startups, their verified figures synced from the demo provider."""
