"""One node of several or the server alone, behind one interface: ``Cluster``."""
