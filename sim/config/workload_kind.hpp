// What a workload is, decided in one place: a .jsonl file is a task stream;
// a .json workload file (or the run document's workload section) names its
// kind in "kind". Every command that dispatches on the kind uses this.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace npusim {

enum class WorkloadKind {
    none,   // no workload (a chip-only load, e.g. for lint of the chip)
    tasks,  // a task-descriptor stream replayed as it is
    graph,  // a model graph compiled on the fly
    collective,  // a collective (allreduce, ...) over every rank (sim/collective)
    llm,    // a serving step of a Hugging Face model, built into a graph (sim/llm)
};

// The names of the kinds a workload may be, in the order messages list them
// (the allowed values of workload.kind in the schema).
const std::vector<std::string>& workload_kind_names();
// "tasks, graph, moe, collective", for messages.
std::string workload_kind_list();

// "tasks", "graph", "moe"; "" for none.
const char* to_string(WorkloadKind kind);

// The kind a "kind" value names. Throws InputError (exit 2)
// "LABEL: workload kind 'x' is not supported yet (supported: ...)" with a
// did-you-mean, or "LABEL: workload.kind: expected a string, got ...".
WorkloadKind parse_workload_kind(const nlohmann::json& value, const std::string& label);

// What the name of a --workload file says: tasks for a .jsonl stream, graph
// for an .onnx model, none for a .json workload file (its "kind" decides). Throws InputError for any
// other file type.
WorkloadKind workload_kind_of_file_name(const std::string& file);

}  // namespace npusim
