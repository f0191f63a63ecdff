# Checks that the texts and the code agree (no build needed):
#   protocol-names: every item the code cites is in docs/protocol.md, and
#   every name docs/protocol.md and launcher/team.pml cite is in the tree.
find_package(Python3 COMPONENTS Interpreter)
if(NOT Python3_Interpreter_FOUND)
  tt_left_out(TT_BUILD_TESTS "protocol-names" "python3 not found")
  return()
endif()
if(TT_SANITIZE STREQUAL "")
  add_test(NAME protocol-names
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/protocol-names.py
            ${PROJECT_SOURCE_DIR})
endif()

# settings-doc: the README's environment table is teams-info --settings.
if(TARGET teams-info AND TT_SANITIZE STREQUAL "")
  add_test(NAME settings-doc
    COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/settings-doc.sh $<TARGET_FILE:teams-info>
            ${PROJECT_SOURCE_DIR}/README.md)
endif()
