"""A real Kafka cluster on loopback, driven through a scenario and held to the model.

``nodes`` starts and stops the controller and broker processes and makes their faults
(``remote`` stands for a cluster someone else started), ``client`` talks to them (Kafka's
Admin, producer and consumer, and the controller's metadata log), ``scenario`` reads a scenario
file, ``play`` plays it and observes each settled state, ``observe`` puts the cluster's states
and the model's in the same terms, ``held`` searches the model for each observed state, and
``run`` is ``kraftcheck cluster``.
"""
