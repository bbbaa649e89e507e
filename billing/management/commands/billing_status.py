"""`make run` prints whether Pro can be bought here, and how to turn billing on (Stripe test
mode) when it cannot."""

from django.conf import settings
from django.core.management.base import BaseCommand

from billing.services import billing_configured

HOW_TO = """Billing is off: Pro shows {contact}.
To sell Pro with Stripe's test mode (no real money):
  1. In the Stripe Dashboard, switch on "Test mode"; Developers -> API keys: copy the
     secret key (sk_test_...).
  2. Product catalogue -> Add product "OpenStartup Pro" with a recurring price; copy its
     price ID (price_...).
  3. Forward webhooks to this server: stripe listen --forward-to
     http://127.0.0.1:{port}/billing/stripe/webhook  (it prints the signing secret whsec_...).
  4. Run: STRIPE_SECRET_KEY=sk_test_... STRIPE_PRO_PRICE_ID=price_... \\
          STRIPE_WEBHOOK_SECRET=whsec_... make run
     then pay on Checkout with the test card 4242 4242 4242 4242.
Or set OPERATOR_CONTACT (an e-mail or https:// URL) to say whom to ask for Pro."""


class Command(BaseCommand):
    help = "Say whether Pro billing (Stripe) is on, and how to turn it on."

    def add_arguments(self, parser):
        parser.add_argument("--port", default="8000")

    def handle(self, *args, port: str, **options):
        if billing_configured():
            mode = "test" if settings.STRIPE_SECRET_KEY.startswith("sk_test_") else "live"
            self.stdout.write(f"Billing is on (Stripe {mode} mode): Pro is sold through Checkout.")
            return
        contact = settings.OPERATOR_CONTACT
        shown = f"the operator contact {contact}" if contact else '"ask the operator"'
        self.stdout.write(HOW_TO.format(contact=shown, port=port))
