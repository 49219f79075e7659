"""The Java harness (a Maven project: pom.xml, src/), shipped with kraftcheck as data and compiled
where it runs (kraftcheck.conform.harness).  Nothing here is imported."""
