"""Loading an operator's own startups from JSON (`import_startups`).

The file is a JSON array of objects in the REST detail shape (camelCase). Imported figures are
self-reported: verified figures come only from a provider sync, never from a file.
"""

import json
from dataclasses import dataclass
from pathlib import Path

from django.db import transaction
from django.utils.text import slugify
from rest_framework import serializers

from startups.changes import CREATED, UPDATED, change_of, startups_change_record
from startups.models import Founder, Social, Startup, Verification


class FounderImportSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    title = serializers.CharField(max_length=100, allow_null=True, required=False, default=None)
    twitter = serializers.URLField(max_length=500, allow_null=True, required=False, default=None)
    linkedin = serializers.URLField(max_length=500, allow_null=True, required=False, default=None)


class SocialImportSerializer(serializers.Serializer):
    platform = serializers.CharField(max_length=50)
    url = serializers.URLField(max_length=500)


class RevenueImportSerializer(serializers.Serializer):
    mrr = serializers.IntegerField(min_value=0, allow_null=True, required=False, default=None)
    arr = serializers.IntegerField(min_value=0, allow_null=True, required=False, default=None)
    currency = serializers.RegexField(r"^[A-Z]{3}$", required=False, default="USD")


def _optional_text(max_length: int) -> serializers.CharField:
    return serializers.CharField(
        max_length=max_length, allow_null=True, allow_blank=False, required=False, default=None
    )


def _optional_url() -> serializers.URLField:
    return serializers.URLField(max_length=500, allow_null=True, required=False, default=None)


class StartupImportSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    slug = serializers.SlugField(max_length=200, allow_unicode=True, required=False)
    icon = _optional_url()
    description = serializers.CharField(allow_null=True, required=False, default=None)
    website = _optional_url()
    category = _optional_text(100)
    categories = serializers.ListField(child=serializers.CharField(max_length=100), default=list)
    industry = _optional_text(100)
    businessType = _optional_text(50)  # noqa: N815 - wire names are camelCase
    founded = serializers.IntegerField(
        min_value=1800, max_value=2100, allow_null=True, required=False, default=None
    )
    country = _optional_text(100)
    teamSize = _optional_text(50)  # noqa: N815
    founderName = _optional_text(200)  # noqa: N815
    technologies = serializers.ListField(child=serializers.CharField(max_length=100), default=list)
    founders = FounderImportSerializer(many=True, default=list)
    socials = SocialImportSerializer(many=True, default=list)
    revenue = RevenueImportSerializer(required=False)
    onSale = serializers.BooleanField(default=False)  # noqa: N815
    askingPrice = serializers.IntegerField(  # noqa: N815
        min_value=0, allow_null=True, required=False, default=None
    )
    aiAddon = serializers.BooleanField(default=False)  # noqa: N815

    def validate(self, attrs: dict) -> dict:
        if attrs["askingPrice"] is not None and not attrs["onSale"]:
            raise serializers.ValidationError("askingPrice is only allowed when onSale is true")
        attrs.setdefault("slug", slugify(attrs["name"], allow_unicode=True))
        if not attrs["slug"]:
            raise serializers.ValidationError("slug could not be made from name; give one")
        return attrs


class ImportFailed(Exception):
    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("; ".join(problems))


@dataclass(frozen=True)
class ImportResult:
    created: int
    updated: int


def _flatten(errors, prefix: str = "") -> list[str]:
    if isinstance(errors, dict):
        return [m for key, value in errors.items() for m in _flatten(value, f"{prefix}{key}.")]
    if isinstance(errors, list) and errors and not isinstance(errors[0], str):
        return [m for i, value in enumerate(errors) for m in _flatten(value, f"{prefix}{i}.")]
    label = prefix.rstrip(".").replace("non_field_errors", "record") or "record"
    return [f"{label}: {message}" for message in errors]


def startups_import(*, path: Path) -> ImportResult:
    """Validate every record, then upsert them all by slug in one transaction (or none)."""
    try:
        payload = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ImportFailed([f"cannot read {path}: {exc}"]) from exc
    if not isinstance(payload, list):
        raise ImportFailed(["the file must hold a JSON array of startup objects"])
    problems, records, seen = [], [], {}
    # Numbered from 1, as people count records in a file.
    for index, item in enumerate(payload, start=1):
        if not isinstance(item, dict):
            problems.append(f"record {index}: must be a JSON object")
            continue
        serializer = StartupImportSerializer(data=item)
        if not serializer.is_valid():
            problems += [f"record {index}: {m}" for m in _flatten(serializer.errors)]
            continue
        slug = serializer.validated_data["slug"]
        if slug in seen:
            problems.append(f"record {index}: slug '{slug}' repeats record {seen[slug]}")
            continue
        seen[slug] = index
        records.append(serializer.validated_data)
    if problems:
        raise ImportFailed(problems)
    return _write(records)


@transaction.atomic
def _write(records: list[dict]) -> ImportResult:
    created = updated = 0
    changes = []
    for data in records:
        revenue = data.get("revenue") or {"mrr": None, "arr": None, "currency": "USD"}
        founders = data["founders"]
        startup, was_created = Startup.objects.update_or_create(
            slug=data["slug"],
            defaults={
                "name": data["name"],
                "icon": data["icon"],
                "description": data["description"],
                "website": data["website"],
                "category": data["category"],
                "categories": data["categories"],
                "industry": data["industry"],
                "business_type": data["businessType"],
                "founded": data["founded"],
                "country": data["country"],
                "team_size": data["teamSize"],
                "technologies": data["technologies"],
                "founder_name": data["founderName"] or (founders[0]["name"] if founders else None),
                "mrr": revenue["mrr"],
                "arr": revenue["arr"],
                "currency": revenue["currency"],
                "on_sale": data["onSale"],
                "asking_price": data["askingPrice"],
                "ai_addon_active": data["aiAddon"],
            },
        )
        created += was_created
        updated += not was_created
        changes.append(change_of(startup, kind=CREATED if was_created else UPDATED))
        # Imported figures are self-reported: an old verification no longer describes them.
        Verification.objects.filter(startup=startup).delete()
        startup.founders.all().delete()
        startup.socials.all().delete()
        Founder.objects.bulk_create(
            Founder(startup=startup, position=i, **founder) for i, founder in enumerate(founders)
        )
        Social.objects.bulk_create(Social(startup=startup, **social) for social in data["socials"])
    startups_change_record(changes)
    return ImportResult(created=created, updated=updated)
