from webhooks.models import Delivery, Endpoint

RECENT_DELIVERIES = 20


def endpoint_list(*, account_id: int) -> list[Endpoint]:
    return list(Endpoint.objects.filter(account_id=account_id).order_by("id"))


def endpoint_get(*, account_id: int, pk: int) -> Endpoint | None:
    return Endpoint.objects.filter(account_id=account_id, pk=pk).first()


def deliveries_recent(*, endpoint: Endpoint, limit: int = RECENT_DELIVERIES) -> list[Delivery]:
    return list(endpoint.deliveries.order_by("-id")[:limit])


def delivery_get(*, account_id: int, pk: int) -> Delivery | None:
    return Delivery.objects.filter(endpoint__account_id=account_id, pk=pk).first()
