from django.urls import path

from experiments import views

urlpatterns = [
    path("experiments/", views.experiment_list, name="experiment_list"),
    path("experiments/new/", views.new_experiment, name="experiment_new"),
    path("experiments/<int:pk>/", views.experiment_detail, name="experiment_detail"),
    path("experiments/<int:pk>/export/<str:name>", views.experiment_export, name="experiment_export"),
    path("experiments/<int:pk>/pause/", views.experiment_pause, name="experiment_pause"),
    path("experiments/<int:pk>/resume/", views.experiment_resume, name="experiment_resume"),
    path("experiments/<int:pk>/cancel/", views.experiment_cancel, name="experiment_cancel"),
    path("xs/<str:token>/", views.experiment_share, name="experiment_share"),
    path("xs/<str:token>/export/<str:name>", views.experiment_share_export, name="experiment_share_export"),
]
