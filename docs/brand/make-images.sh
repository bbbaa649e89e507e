#!/usr/bin/env bash
# Renders the committed PNGs from their HTML sources with Debian's Chromium (no download):
# static/img/og.png (the og:image, 1200x630) and static/img/icon-180.png (apple-touch-icon).
set -euo pipefail
cd "$(dirname "$0")/../.."
CHROME="${CHROME_PATH:-/usr/bin/chromium}"
shot() {
  "$CHROME" --headless --no-sandbox --disable-gpu --hide-scrollbars --force-device-scale-factor=1 \
    --window-size="$2" --screenshot="$3" "file://$PWD/$1" 2>/dev/null
}
shot docs/brand/og.html 1200,630 static/img/og.png
shot docs/brand/icon.html 180,180 static/img/icon-180.png
