# Websocket routes arrive with the live debate page.
websocket_urlpatterns: list = []
