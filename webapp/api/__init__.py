"""The project's side of the REST convention, named in the settings: the exception handler
(the apps' and the simulator's errors as 400/403/404 responses), token authentication in one
plain query, and the launch rate counted in Redis. What the apps share without the project is
in `restapi`."""
