"""Django's PostgreSQL backend with connecting bounded by the request's database deadline."""
