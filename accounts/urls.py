"""A person's own account pages. The URL names are the ones the templates and tests have always reversed."""

from django.contrib.auth import views as auth_views
from django.urls import path

from accounts import views
from chaoslm import http  # noqa: F401  (registers the <id:...> converter)

urlpatterns = [
    path("accounts/login/", views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/signup/", views.signup, name="signup"),
    path("account/usage/", views.usage, name="account_usage"),
    path("account/tokens/", views.tokens_page, name="api_tokens"),
    path("account/tokens/<id:pk>/revoke/", views.revoke_token, name="api_token_revoke"),
    path("account/webhooks/", views.webhooks_page, name="api_webhooks"),
    path("account/webhooks/<id:pk>/delete/", views.delete_webhook, name="api_webhook_delete"),
    path("account/deliveries/<id:pk>/redeliver/", views.redeliver, name="api_redeliver"),
]
