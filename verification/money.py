"""Amounts in minor units with their currency, and their one conversion to whole US dollars.

Connectors never convert: they add minor units per currency (`Money`). Conversion happens once,
at output, with the static rates below; `docs/methodology.md` explains the arithmetic.
"""

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from django.conf import settings

# Money: ISO currency code (upper case) -> amount in that currency's minor units. Decimal because
# normalising a subscription to a month can leave fractions of a minor unit (1000 / 12).
Money = dict[str, Decimal]

# ISO 4217 minor-unit exponents that are not 2. Stripe and the others send JPY in yen and KWD in
# fils (1/1000 dinar); every other currency here has cents.
ZERO_DECIMAL = {"BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX"}
ZERO_DECIMAL |= {"VND", "VUV", "XAF", "XOF", "XPF"}
THREE_DECIMAL = {"BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"}

# US dollars per one unit of each currency, fixed on FX_RATES_DATE. A static, documented table:
# no network fetch, so anyone can redo our arithmetic. Override with settings.REVENUE_FX_RATES.
FX_RATES_DATE = "2026-11-01"
FX_RATES: dict[str, str] = {
    "USD": "1",
    "EUR": "1.08",
    "GBP": "1.27",
    "CAD": "0.72",
    "AUD": "0.65",
    "CHF": "1.13",
    "JPY": "0.0067",
    "INR": "0.012",
    "BRL": "0.18",
    "SEK": "0.094",
    "NOK": "0.091",
    "DKK": "0.145",
    "PLN": "0.25",
    "MXN": "0.055",
    "SGD": "0.74",
    "KWD": "3.25",
    "BHD": "2.65",
}

WHOLE = Decimal(1)


class MissingExchangeRate(Exception):
    """An amount is in a currency the rate table does not know; we never guess a rate."""


@dataclass(frozen=True)
class Rate:
    usd_per_unit: Decimal
    date: str


def minor_unit_exponent(currency: str) -> int:
    code = currency.upper()
    if code in ZERO_DECIMAL:
        return 0
    if code in THREE_DECIMAL:
        return 3
    return 2


def exchange_rate(currency: str) -> Rate:
    table, day = FX_RATES, FX_RATES_DATE
    if settings.REVENUE_FX_RATES:
        table, day = settings.REVENUE_FX_RATES, settings.REVENUE_FX_RATES_DATE
    code = currency.upper()
    if code not in table:
        raise MissingExchangeRate(f"no exchange rate for {code}; add it to the FX table")
    return Rate(usd_per_unit=Decimal(str(table[code])), date=day)


def major_to_minor(text: str | int | float | Decimal, currency: str) -> Decimal:
    """A formatted amount in major units ("49.50", "1,400", "$1,400.00") to minor units of
    `currency` (4950 cents; 1400 yen). Commas are thousands separators, the dot the decimal mark,
    as the providers format them; a value that is not such a number raises ValueError."""
    cleaned = str(text).strip().replace(",", "").replace("\u00a0", "").replace(" ", "")
    cleaned = cleaned.lstrip("$€£¥₹")
    try:
        amount = Decimal(cleaned)
    except ArithmeticError:
        raise ValueError(f"not an amount: {str(text)[:40]!r}") from None
    if not amount.is_finite():
        raise ValueError(f"not an amount: {str(text)[:40]!r}")
    return amount.scaleb(minor_unit_exponent(currency))


def money_add(money: Money, currency: str, minor: Decimal | int) -> None:
    code = currency.upper()
    money[code] = money.get(code, Decimal(0)) + Decimal(minor)


def usd_exact(money: Money) -> Decimal:
    """Dollars, unrounded: each currency's minor units to units, times its rate, summed."""
    return sum(
        (
            minor.scaleb(-minor_unit_exponent(code)) * exchange_rate(code).usd_per_unit
            for code, minor in money.items()
        ),
        Decimal(0),
    )


def to_whole_usd(money: Money) -> int:
    """Whole US dollars, half up: the only place money is rounded."""
    return int(usd_exact(money).quantize(WHOLE, rounding=ROUND_HALF_UP))


def rates_used(*amounts: Money) -> dict[str, dict[str, str]]:
    """The rate and its date for every currency that appears, to store beside the figures."""
    codes = sorted({code for money in amounts for code in money})
    return {
        code: {"rate": str(exchange_rate(code).usd_per_unit), "date": exchange_rate(code).date}
        for code in codes
    }
