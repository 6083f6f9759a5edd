"""What the benchmark scripts (plot_pipeline.py, veth_bench.py) say about the machine."""
import platform


def cpu_model():
    """The CPU's model name from /proc/cpuinfo, else what platform knows."""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()
