"""Infrastructure that imports no app: db, cache breaker, http helpers, formats, OpenAPI hooks."""
