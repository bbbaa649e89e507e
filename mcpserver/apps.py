from django.apps import AppConfig


class McpserverConfig(AppConfig):
    name = "mcpserver"
