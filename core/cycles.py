"""Each API answer let go by reference counting once it is written, not by the cycle collector.

DRF ties a request's objects into reference cycles: the view holds the Request (and, once
finalized, the Response), the Request's `parser_context` holds the view and the Request
itself, a DRF Response's `renderer_context` holds the view, the Request and the Response
itself, and Django's `View.setup` binds `view.head = view.get`. Nothing of a served request
(the view, both requests, the page's rows: some 60-120 container objects an answer) is then
freed when the request ends; it waits for the garbage collector, which those objects
themselves set off (a generation-0 collection every 700 net allocations), and every full
collection walks all the copies the process keeps while the worker's other threads wait.
Measured on the 100,000-startup bench dataset (bench/NOTES.md, "Garbage collection"): each
worker spent about 10 % of its CPU in the collector, full collections took 80-200 ms.

`ReleasesCycles` cuts the cycles when the answer is closed (the WSGI server calls `close()`
after writing the body; Django runs `_resource_closers` there and then clears them): nothing
reads these objects again, and reference counting frees the whole request at once. Serializers
have cycles of their own (a ListSerializer and its child, a bound field and its parent): the
hot paths shape their rows without them (startups/serializers.py, `shape_list_rows`) or let
them go once read (`release_serializer`).
"""

from django.http import HttpResponse
from rest_framework.request import Request


def release(view: object, request: Request, response: HttpResponse) -> None:
    """Cut the reference cycles of a written DRF answer (see the module's docstring)."""
    if getattr(response, "renderer_context", None) is not None:  # a DRF Response's
        response.renderer_context = None
    request.parser_context = None
    view.__dict__.clear()  # request, response, args, kwargs, headers, head (a bound get)


def release_serializer(serializer: object) -> None:
    """Cut a used serializer's cycles (its bound fields and their `parent`, its BindingDict):
    call it once its validated data and errors have been read."""
    serializer.__dict__.clear()


class ReleasesCycles:
    """A DRF view mixin: `release` runs once the answer is written."""

    def finalize_response(self, request: Request, response: HttpResponse, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        # The lambda refers back to the response until Django clears its closers.
        response._resource_closers.append(lambda: release(self, request, response))
        return response
