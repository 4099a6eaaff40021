// src/cli/cmd_schema.cc
//
// `ncclpm schema`: the incident database's tables, views and indexes.
#include <iostream>

#include "ncclpm/store/schema.h"
#include "options.h"

namespace ncclpm::cli {

int cmd_schema(const Args& args) {
  static const CommandHelp help{"schema", "ncclpm schema",
                                "Prints the SQL schema of the incident database; docs/schema.md\n"
                                "explains every table and column.",
                                "  ncclpm schema | less\n"};
  po::options_description visible("Options");
  po::options_description hidden;
  po::positional_options_description pos;
  po::variables_map vm;
  if (auto rc = parse_options(help, visible, hidden, pos, args, vm)) return *rc;
  std::cout << "-- ncclpm incident database, schema version " << store::kSchemaVersion
            << " (PRAGMA user_version)\n"
            << store::schema_sql() << store::index_sql();
  return 0;
}

}  // namespace ncclpm::cli
