"""/api/v1/webhooks/endpoints: register, list, read, change and delete webhook endpoints with an
API key (any plan; no allowance spent). Rules live in webhooks/services.py."""

from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
)
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from core.errors import ApiError, ErrorSerializer, InvalidApiKey, NotFound
from core.openapi import REST_RESPONSE_HEADERS, REST_TAG, error_responses
from quota.callers import KeyAccount
from quota.views import RestView
from startups.serializers import text, timestamp, whole
from webhooks.limits import DELIVERY_RETENTION, ENDPOINTS, EVENT_TYPES
from webhooks.models import Delivery, Endpoint
from webhooks.selectors import RECENT_DELIVERIES, deliveries_recent, endpoint_get, endpoint_list
from webhooks.services import (
    EndpointLimit,
    EndpointRefused,
    endpoint_create,
    endpoint_delete,
    endpoint_update,
)


class InvalidWebhook(ApiError):
    code = "invalid_webhook"


class WebhookLimit(ApiError):
    status_code = 403
    code = "webhook_limit"


class WebhookEndpointInputSerializer(serializers.Serializer):
    """The body of POST (url required) and PATCH (any subset). Names are camelCase as sent."""

    url = serializers.CharField(
        required=False,
        max_length=2000,
        help_text="Where events are POSTed: https:// (http:// only on development servers), "
        "a public address (never loopback, private or link-local).",
    )
    description = serializers.CharField(required=False, allow_blank=True, max_length=200)
    events = serializers.ListField(
        child=serializers.ChoiceField(choices=EVENT_TYPES),
        required=False,
        max_length=len(EVENT_TYPES),
        help_text="Event types to send; left out or empty: all of them.",
    )
    slugs = serializers.ListField(
        child=serializers.CharField(max_length=200),
        required=False,
        max_length=100,
        help_text="Only these startups; empty: every startup.",
    )
    categories = serializers.ListField(
        child=serializers.CharField(max_length=100),
        required=False,
        max_length=100,
        help_text="Only startups in one of these categories (case-insensitive); empty: all.",
    )
    verifiedOnly = serializers.BooleanField(  # noqa: N815 - the wire name
        source="verified_only",
        required=False,
        help_text="Only startups whose figures a payment provider verifies.",
    )
    revenueThresholdPercent = serializers.IntegerField(  # noqa: N815 - the wire name
        source="revenue_threshold_percent",
        required=False,
        min_value=0,
        max_value=1000,
        help_text="`revenue.changed` fires when MRR moves by at least this percent of the "
        "previous MRR (0: every change; default 10). From or to no MRR always fires.",
    )
    enabled = serializers.BooleanField(
        required=False, help_text="PATCH only: true re-enables a disabled endpoint."
    )

    def model_fields(self) -> dict:
        # The camelCase wire names map to the model's by `source` (as startups/params.py does).
        return dict(self.validated_data)


class WebhookEndpointSerializer(serializers.Serializer):
    id = whole()
    url = text()
    description = text()
    events = serializers.ListField(child=serializers.ChoiceField(choices=EVENT_TYPES))
    slugs = serializers.ListField(child=text())
    categories = serializers.ListField(child=text())
    verified_only = serializers.BooleanField()
    revenue_threshold_percent = whole()
    enabled = serializers.BooleanField()
    disabled_reason = text(null=True, help_text="Why it was disabled; null while enabled.")
    created_at = timestamp()

    def to_representation(self, endpoint: Endpoint) -> dict:
        data = super().to_representation(endpoint)
        data["disabled_reason"] = None if endpoint.enabled else endpoint.disabled_reason or None
        return data


class WebhookEndpointCreatedSerializer(WebhookEndpointSerializer):
    secret = text(
        help_text="`whsec_...`: verify signatures with it (Standard Webhooks). Shown only "
        "in this answer; it cannot be read again."
    )


class WebhookEndpointListSerializer(serializers.Serializer):
    data = WebhookEndpointSerializer(many=True)


class WebhookEndpointEnvelopeSerializer(serializers.Serializer):
    data = WebhookEndpointSerializer()


class WebhookEndpointCreatedEnvelopeSerializer(serializers.Serializer):
    data = WebhookEndpointCreatedSerializer()


class WebhookDeliverySerializer(serializers.Serializer):
    id = whole()
    event_id = text(help_text="The event's `webhook-id` (`msg_...`), the same on every attempt.")
    event_type = serializers.ChoiceField(choices=EVENT_TYPES)
    status = serializers.ChoiceField(
        choices=Delivery.Status.values,
        help_text="`pending`: queued or being retried; `delivered`: the endpoint answered 2xx; "
        "`failed`: the retry schedule ran out.",
    )
    attempts = whole(help_text="Attempts made so far.")
    next_attempt_at = timestamp(null=True, help_text="When it is tried next; null once done.")
    last_attempt_at = timestamp(null=True, help_text="null before the first attempt.")
    last_status_code = whole(
        null=True,
        help_text="HTTP status of the last answer; null without one (never tried, "
        "timed out, refused).",
    )
    last_error = text(null=True, help_text="Why the last attempt failed; null when it did not.")
    created_at = timestamp(help_text="When the event was queued.")

    def to_representation(self, delivery: Delivery) -> dict:
        data = super().to_representation(delivery)
        data["last_error"] = delivery.last_error or None
        if delivery.status != Delivery.Status.PENDING:
            data["next_attempt_at"] = None
        return data


class WebhookDeliveryListSerializer(serializers.Serializer):
    data = WebhookDeliverySerializer(many=True)


def _error(code: str, description: str) -> OpenApiResponse:
    return OpenApiResponse(ErrorSerializer, description=f"`{code}`: {description}")


_INVALID = _error(
    "invalid_webhook",
    "The body is not valid: a missing or non-https `url`, an address deliveries refuse, an "
    "unknown event type, a value of the wrong type (or `invalid_request`: not JSON).",
)
_NOT_FOUND = _error("not_found", "No endpoint with this id belongs to the key's account.")
_LIMIT = _error(
    "webhook_limit",
    f"The plan's endpoints are all used ({ENDPOINTS['Free']} Free, {ENDPOINTS['Pro']} Pro). "
    "Or `email_not_confirmed`: the key's account has not confirmed its e-mail address.",
)
_UNSUPPORTED = _error("unsupported_media_type", "Send the body as application/json.")
_KEYED = " Needs an API key (any plan); spends none of the monthly allowance."


ENDPOINT_ID = OpenApiParameter(
    "endpoint_id",
    str,
    location=OpenApiParameter.PATH,
    description="The endpoint's `id` (digits; from the list or the registration's answer). "
    "Anything else is `404 not_found`.",
)


def _operation(
    operation_id: str, summary: str, ok: dict, errors: dict, *, path: tuple = (), **kwargs
):
    return extend_schema(
        operation_id=operation_id,
        summary=summary,
        tags=[REST_TAG],
        parameters=[*path, *REST_RESPONSE_HEADERS],
        responses={**ok, **error_responses(401, 403, 405, 429, 500), **errors},
        **kwargs,
    )


def _account(request: Request) -> KeyAccount:
    if not isinstance(request.user, KeyAccount):
        raise InvalidApiKey("Webhooks need an API key: send 'Authorization: Bearer <key>'.")
    return request.user


def _body(request: Request) -> dict:
    if not isinstance(request.data, dict):
        raise InvalidWebhook("The body must be a JSON object.")
    body = WebhookEndpointInputSerializer(data=request.data)
    if not body.is_valid():
        name, problem = next(iter(body.errors.items()))
        while isinstance(problem, dict | list) and problem:
            problem = next(iter(problem.values())) if isinstance(problem, dict) else problem[0]
        raise InvalidWebhook(f"`{name}`: {problem}")
    return body.model_fields()


class WebhookEndpointListView(RestView):
    @_operation(
        "listWebhookEndpoints",
        "List webhook endpoints",
        {200: WebhookEndpointListSerializer},
        {},
        description="The key's account's webhook endpoints, oldest first (secrets are never "
        "shown again)." + _KEYED,
    )
    def get(self, request: Request) -> Response:
        account = _account(request)
        endpoints = endpoint_list(account_id=account.pk)
        return Response({"data": WebhookEndpointSerializer(endpoints, many=True).data})

    @_operation(
        "createWebhookEndpoint",
        "Register a webhook endpoint",
        {201: WebhookEndpointCreatedEnvelopeSerializer},
        {400: _INVALID, 403: _LIMIT, 415: _UNSUPPORTED},
        request=WebhookEndpointInputSerializer,
        description="Registers an endpoint and answers its signing secret, once. Events are "
        "signed per the Standard Webhooks specification (README, Webhooks)." + _KEYED,
        examples=[
            OpenApiExample(
                "Register",
                value={"url": "https://example.com/hooks", "events": ["startup.updated"]},
                request_only=True,
            )
        ],
    )
    def post(self, request: Request) -> Response:
        account = _account(request)
        data = _body(request)
        try:
            created = endpoint_create(account=account, plan_name=account.plan.name, data=data)
        except EndpointLimit as error:
            raise WebhookLimit(str(error)) from None
        except EndpointRefused as error:
            raise InvalidWebhook(str(error)) from None
        shown = WebhookEndpointCreatedSerializer(created.endpoint).data
        shown["secret"] = created.secret
        return Response({"data": shown}, status=201)


def _owned_endpoint(request: Request, endpoint_id: str) -> Endpoint:
    """The key's account's endpoint `endpoint_id`; 404 for any other id or account."""
    account = _account(request)
    endpoint = None
    if endpoint_id.isascii() and endpoint_id.isdigit() and len(endpoint_id) < 19:
        endpoint = endpoint_get(account_id=account.pk, pk=int(endpoint_id))
    if endpoint is None:
        raise NotFound("No webhook endpoint with this id belongs to this key's account.")
    return endpoint


class WebhookEndpointDetailView(RestView):
    def _endpoint(self, request: Request, endpoint_id: str) -> Endpoint:
        return _owned_endpoint(request, endpoint_id)

    @_operation(
        "getWebhookEndpoint",
        "Read a webhook endpoint",
        {200: WebhookEndpointEnvelopeSerializer},
        {404: _NOT_FOUND},
        path=(ENDPOINT_ID,),
        description="One of the account's endpoints." + _KEYED,
    )
    def get(self, request: Request, endpoint_id: str) -> Response:
        endpoint = self._endpoint(request, endpoint_id)
        return Response({"data": WebhookEndpointSerializer(endpoint).data})

    @_operation(
        "updateWebhookEndpoint",
        "Change a webhook endpoint",
        {200: WebhookEndpointEnvelopeSerializer},
        {400: _INVALID, 404: _NOT_FOUND, 415: _UNSUPPORTED},
        path=(ENDPOINT_ID,),
        request=WebhookEndpointInputSerializer,
        description="Changes the fields sent; `enabled: true` re-enables a disabled endpoint "
        "(its queued events are sent again from the oldest)." + _KEYED,
    )
    def patch(self, request: Request, endpoint_id: str) -> Response:
        endpoint = self._endpoint(request, endpoint_id)
        data = _body(request)
        try:
            endpoint = endpoint_update(endpoint=endpoint, data=data)
        except EndpointRefused as error:
            raise InvalidWebhook(str(error)) from None
        return Response({"data": WebhookEndpointSerializer(endpoint).data})

    @_operation(
        "deleteWebhookEndpoint",
        "Delete a webhook endpoint",
        {204: OpenApiResponse(description="Deleted, with its queued events.")},
        {404: _NOT_FOUND},
        path=(ENDPOINT_ID,),
        description="Deletes the endpoint and its queue." + _KEYED,
    )
    def delete(self, request: Request, endpoint_id: str) -> Response:
        endpoint_delete(endpoint=self._endpoint(request, endpoint_id))
        return Response(status=204)


class WebhookDeliveryListView(RestView):
    @_operation(
        "listWebhookDeliveries",
        "List a webhook endpoint's deliveries",
        {200: WebhookDeliveryListSerializer},
        {404: _NOT_FOUND},
        path=(ENDPOINT_ID,),
        description=f"The endpoint's {RECENT_DELIVERIES} most recent deliveries, newest first: "
        "status, attempts, next attempt and the last answer's status code. Finished ones are "
        f"kept {DELIVERY_RETENTION.days} days." + _KEYED,
    )
    def get(self, request: Request, endpoint_id: str) -> Response:
        endpoint = _owned_endpoint(request, endpoint_id)
        deliveries = deliveries_recent(endpoint=endpoint)
        return Response({"data": WebhookDeliverySerializer(deliveries, many=True).data})
