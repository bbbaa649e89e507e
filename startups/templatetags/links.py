"""Links from stored, third-party fields (websites, socials, founders' profiles): the rule is
core.escaping.web_url, the same one the Markdown twin uses."""

from django import template

from core.escaping import web_url

register = template.Library()
register.filter("web_url", web_url)
