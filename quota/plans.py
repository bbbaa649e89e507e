"""What each plan allows. One place for the numbers the spec gives."""

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class PlanLimits:
    name: str
    max_limit: int
    default_limit: int
    monthly_allowance: int | None  # None: no cap


FREE = PlanLimits(name="Free", max_limit=10, default_limit=10, monthly_allowance=100)
PRO = PlanLimits(name="Pro", max_limit=50, default_limit=10, monthly_allowance=None)


def plan_for(*, pro: bool, allowance_override: int | None = None) -> PlanLimits:
    """An account's plan: Pro or Free, a capped plan's allowance replaced by the operator's
    per-account override when one is set (User.monthly_allowance_override)."""
    plan = PRO if pro else FREE
    if allowance_override is not None and plan.monthly_allowance is not None:
        return replace(plan, monthly_allowance=allowance_override)
    return plan


@dataclass(frozen=True)
class AppliedLimit:
    value: int
    notice: str | None


def apply_limit(*, requested: int | None, plan: PlanLimits) -> AppliedLimit:
    """Clamp a requested page size into 1..plan maximum; say so when it was lowered."""
    if requested is None:
        return AppliedLimit(value=plan.default_limit, notice=None)
    if requested < 1:
        return AppliedLimit(value=1, notice=None)
    if requested > plan.max_limit:
        return AppliedLimit(
            value=plan.max_limit,
            notice=(
                f"limit lowered from {requested} to {plan.max_limit}, the most one request "
                f"can return on the {plan.name} plan."
            ),
        )
    return AppliedLimit(value=requested, notice=None)


def remaining_notice(*, wanted: int, granted: int, plan: PlanLimits, resets_on: str) -> str:
    """meta.notice when a page was cut to the records left of the monthly allowance."""
    return (
        f"limit lowered from {wanted} to {granted}: only {granted} of this month's "
        f"{plan.monthly_allowance} {plan.name} records were left. The allowance resets on "
        f"{resets_on}."
    )
