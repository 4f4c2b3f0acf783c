from django.apps import AppConfig


class AudienceConfig(AppConfig):
    name = "audience"

    def ready(self) -> None:
        from audience import poll_views, votes
        from debates import poll_hooks

        # The debate's page, pushes, socket and exports show its poll through debates/poll_hooks.py: debates sits
        # below this app and cannot import it.
        poll_hooks.register(
            poll_hooks.Poll(
                box_context=poll_views.box_context,
                current_ping=votes.current_ping,
                has_poll=votes.has_poll,
                waiting_ping=lambda: votes.poll_ping(votes.WAITING),
                phase_of_message=votes.phase_of_message,
                export=votes.export,
                export_markdown=votes.export_markdown,
            )
        )
