"""gunicorn settings, read automatically from the working directory (`make run`, .ci/schemathesis).

The API answers long query strings itself (10 KB and more; Django bounds the parameter count with
DATA_UPLOAD_MAX_NUMBER_FIELDS), so gunicorn must not cut request lines at its 4 KB default with
an HTML error. Its only settings are 0 (unlimited) or at most 8190; a proxy in front should
allow request lines of at least 16 KB.
"""

limit_request_line = 0
