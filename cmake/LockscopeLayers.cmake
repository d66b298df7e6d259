# SPDX-License-Identifier: GPL-2.0-or-later
# The boxes and their floors: the one list of lockscope's layering.
#
# A box is a folder; every target defined under it belongs to it. A target may
# link targets of its own box and of boxes on lower floors, never a box on its
# own floor or above: lockscope_check_layers() stops the configure when one
# does, and writes the table docs/where-things-live.md shows (a test keeps the
# two equal).
set(LOCKSCOPE_BOXES
  "core/util=0=process and file helpers with no lockscope knowledge"
  "core/capture=1=the capture model and its file format"
  "core/scaling_format=2=the scaling-results file format"
  "probes=2=BPF programs and their loader"
  "collector=3=record: backends, workload runner, symbolization, capture assembly"
  "reports=3=reports, comparison, renderers, exporters, importers"
  "lab=4=kernels under qemu, built from source, recorded and compared"
  "agent=4=lockscope agent: windowed read-out, cumulative figures, HTTP (metrics, pprof, captures)"
  "cli=5=the lockscope command"
  "gui=5=the Qt6 desktop app"
  "samples=6=workloads, reference implementations, scaling harness"
  "bench=7=benchmarks that span boxes"
  "scripts=7=the build's own checks")

# The box of a source directory (empty when it is in none).
function(lockscope_box_of dir out_box out_floor)
  file(RELATIVE_PATH rel "${PROJECT_SOURCE_DIR}" "${dir}")
  set(best "")
  set(best_floor "")
  foreach(entry IN LISTS LOCKSCOPE_BOXES)
    string(REPLACE "=" ";" parts "${entry}")
    list(GET parts 0 name)
    list(GET parts 1 floor)
    string(LENGTH "${name}" len)
    string(LENGTH "${best}" best_len)
    if((rel STREQUAL name OR rel MATCHES "^${name}/") AND len GREATER best_len)
      set(best "${name}")
      set(best_floor "${floor}")
    endif()
  endforeach()
  set(${out_box} "${best}" PARENT_SCOPE)
  set(${out_floor} "${best_floor}" PARENT_SCOPE)
endfunction()

function(lockscope_collect_targets dir out)
  get_property(here DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    lockscope_collect_targets("${sub}" more)
    list(APPEND here ${more})
  endforeach()
  set(${out} "${here}" PARENT_SCOPE)
endfunction()

# The project's own targets a target links (aliases resolved; imported and
# generator-expression items left out).
function(lockscope_own_links target out)
  set(items "")
  get_target_property(type ${target} TYPE)
  if(NOT type STREQUAL "INTERFACE_LIBRARY")
    get_target_property(links ${target} LINK_LIBRARIES)
    if(links)
      list(APPEND items ${links})
    endif()
  endif()
  get_target_property(iface ${target} INTERFACE_LINK_LIBRARIES)
  if(iface)
    list(APPEND items ${iface})
  endif()
  set(own "")
  foreach(item IN LISTS items)
    string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" item "${item}")
    if(item MATCHES "^\\$<" OR NOT TARGET "${item}")
      continue()
    endif()
    get_target_property(aliased "${item}" ALIASED_TARGET)
    if(aliased)
      set(item "${aliased}")
    endif()
    get_target_property(imported "${item}" IMPORTED)
    if(NOT imported)
      list(APPEND own "${item}")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES own)
  set(${out} "${own}" PARENT_SCOPE)
endfunction()

# Stops the configure on a link to a higher floor or a sibling box; writes
# the floors table to ${out_md}.
function(lockscope_check_layers out_md)
  lockscope_collect_targets("${PROJECT_SOURCE_DIR}" targets)
  set(errors "")
  foreach(target IN LISTS targets)
    get_target_property(dir ${target} SOURCE_DIR)
    lockscope_box_of("${dir}" box floor)
    if(box STREQUAL "")
      string(APPEND errors "\n  ${target} (${dir}) is in no box of LOCKSCOPE_BOXES")
      continue()
    endif()
    lockscope_own_links(${target} deps)
    foreach(dep IN LISTS deps)
      get_target_property(dep_dir ${dep} SOURCE_DIR)
      lockscope_box_of("${dep_dir}" dep_box dep_floor)
      if(dep_box STREQUAL box)
        continue()
      endif()
      if(NOT dep_floor LESS floor)
        string(APPEND errors "\n  ${target} (${box}, floor ${floor}) links ${dep} (${dep_box}, floor ${dep_floor})")
      endif()
      list(APPEND uses_${box} "${dep_box}")
    endforeach()
  endforeach()
  if(errors)
    message(FATAL_ERROR "lockscope layers: a box may link only boxes on lower floors "
                        "(cmake/LockscopeLayers.cmake):${errors}")
  endif()
  set(md "| floor | box | what | links |\n|---:|---|---|---|\n")
  foreach(entry IN LISTS LOCKSCOPE_BOXES)
    string(REPLACE "=" ";" parts "${entry}")
    list(GET parts 0 name)
    list(GET parts 1 floor)
    list(GET parts 2 what)
    set(uses "${uses_${name}}")
    if(uses)
      list(REMOVE_DUPLICATES uses)
      list(SORT uses)
      list(JOIN uses ", " uses)
    else()
      set(uses "-")
    endif()
    string(APPEND md "| ${floor} | `${name}/` | ${what} | ${uses} |\n")
  endforeach()
  file(WRITE "${out_md}" "${md}")
endfunction()
