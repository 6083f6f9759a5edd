# warpath: the two commands of the README, plus a few conveniences.
#   make demo    set up, build, and run warpath's main job on built-in data
#   make test    set up, build, and run the whole test suite (ctest + pytest)
# Other targets: build, setup, docs (man pages, bash completion), gpu-check, format, tidy,
# clean.  PRESET=cpu builds without CUDA.
PRESET ?= default
BUILD_DIR_default := build
BUILD_DIR_cpu := build-cpu
BUILD_DIR_asan := build-asan
BUILD_DIR := $(BUILD_DIR_$(PRESET))
JOBS ?= $(shell nproc)
export WARPATH_DATA ?= $(abspath ../shared/data)

.PHONY: all setup build demo test test-cpp test-py docs gpu-check format tidy clean

all: build

setup: .setup-done
.setup-done: scripts/setup.sh python/requirements.txt
	bash scripts/setup.sh
	@touch $@

$(BUILD_DIR)/build.ninja: | .setup-done
	cmake --preset $(PRESET)

build: .setup-done $(BUILD_DIR)/build.ninja
	cmake --build $(BUILD_DIR) -j $(JOBS)

demo: build
	./$(BUILD_DIR)/warpath demo --out-dir $(BUILD_DIR)/demo
	@echo
	@echo "== warpath run: the built-in router+acl pipeline (generator -> router+ACL -> null sink)"
	./$(BUILD_DIR)/warpath run --json $(BUILD_DIR)/demo/run.json
	@echo
	@echo "== warpath run examples/ipsec.toml: the IPsec ESP gateway (generator -> esp-in -> esp-out -> router)"
	./$(BUILD_DIR)/warpath run examples/ipsec.toml --json $(BUILD_DIR)/demo/ipsec.json
	@echo
	@echo "== warpath run: the OpenFlow switch (generator -> switch(examples/switch/flows.txt) -> two sinks), its flows as dump-flows prints them"
	./$(BUILD_DIR)/warpath run --chain "switch(flows=examples/switch/flows.txt, dump=$(BUILD_DIR)/demo/switch-flows.txt)" \
	  --port gen=gen:max:200000 --port p2=null --port p3=null --openflow none --json $(BUILD_DIR)/demo/switch.json
	@cat $(BUILD_DIR)/demo/switch-flows.txt
	@echo
	@echo "== warpath nids: Suricata-style rules over examples/nids/demo.pcap's packets and reassembled streams (EVE alerts)"
	./$(BUILD_DIR)/warpath nids --rules examples/nids/demo.rules --in examples/nids/demo.pcap --eve - --no-flows \
	  --fast $(BUILD_DIR)/demo/fast.log --json $(BUILD_DIR)/demo/nids.json

test: build
	$(MAKE) --no-print-directory test-cpp test-py

test-cpp:
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)

test-py:
	WARPATH_BIN=$(abspath $(BUILD_DIR))/warpath .venv/bin/python -m pytest tests -q

docs: build
	./$(BUILD_DIR)/warpath docs --man $(BUILD_DIR)/man
	./$(BUILD_DIR)/warpath docs --completion bash > $(BUILD_DIR)/warpath.bash
	@echo "man -l $(BUILD_DIR)/man/warpath-run.1; source $(BUILD_DIR)/warpath.bash"

gpu-check:
	bash scripts/gpu-check.sh

format:
	find include src tools tests fuzz -name '*.[ch]pp' -o -name '*.cu' -o -name '*.cuh' | xargs clang-format -i

tidy: build
	find src tools -name '*.cpp' | xargs clang-tidy -p $(BUILD_DIR) --quiet

clean:
	rm -rf build build-cpu build-asan build-gpu .setup-done
