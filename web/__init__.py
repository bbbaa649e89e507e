"""The HTML site: pages, the founder's dashboard and account, docs pages (above the domain apps)."""
