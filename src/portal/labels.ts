/**
 * Request fields in words, for the sales desk's forms (docs/decisions/0060-sales-desk-forms-from-schemas.md).
 * A field's path (`foreign_vehicle.category`, a row of a list as `persons[]`) is looked up whole,
 * then by its last name; a field named nowhere here is its name in words (`locality_name` →
 * "Locality name"), so a field added to a schema gets a label without a line here.
 */
const BY_PATH: Record<string, string> = {
  vehicle: 'Vehicle registration certificate number',
  idnx: 'IDNP or IDNO of the owner',
  idnp: 'IDNP',
  vin: 'VIN',
  vehicle_category: 'Vehicle category',
  category: 'Vehicle category',
  registration_number: 'Plate number',
  plate_number: 'Plate number',
  identity_document: 'Identity document (IDNP or passport number)',
  driver_full_name: 'Driver’s full name',
  country: 'Country',
  foreign_vehicle: 'Foreign vehicle (instead of a Moldovan registration certificate)',
  'foreign_vehicle.registration_country': 'Registration country',
  'foreign_vehicle.category': 'Vehicle category',
  max_authorized_mass: 'Maximum authorised mass (kg)',
  places: 'Seats',
  residence_country: 'Driver’s country of residence',
  start_date: 'Start date',
  end_date: 'End date',
  duration: 'Duration (days)',
  period: 'Period',
  region: 'Region',
  validity: 'Validity',
  lang: 'Language of the offers',
  insurance_company: 'Insurance company',
  company_name: 'Insurance company',
  amount: 'Insured amount (EUR)',
  covered_territories: 'Covered territories',
  is_multiple_type: 'Multiple trips',
  availability: 'Availability (months)',
  insured_days: 'Insured days',
  include_additional_risk: 'Include additional risks',
  activity: 'Activity',
  persons: 'Travellers',
  'persons[]': 'Traveller',
  first_name: 'First name',
  last_name: 'Last name',
  birthday: 'Date of birth',
  address: 'Address',
  passport: 'Passport series and number',
  contractor: 'Policyholder',
  'contractor.type': 'Policyholder type',
  'contractor.idnx': 'IDNP or IDNO',
  fullName: 'Company name',
  full_name: 'Company name (alternative spelling)',
  baggage_pcs: 'Checked baggage pieces',
  flight_numbers: 'Flight numbers',
  'flight_numbers[]': 'Flight number',
  contractor_full_name: 'Policyholder’s full name',
  locality_id: 'Locality code (CUATM)',
  emission_class: 'Emission class',
  emission_proof_declared: 'Customer holds a document proving the emission class',
  make: 'Make',
  model: 'Model',
};

const words = (name: string) => {
  const spaced = name
    .replace(/\[\]$/, '')
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .replaceAll('_', ' ')
    .toLowerCase();
  return spaced.charAt(0).toUpperCase() + spaced.slice(1);
};

/** The words of a field's path. */
export function labelOf(path: string): string {
  const last = path.split('.').at(-1)!;
  return BY_PATH[path] ?? BY_PATH[last] ?? words(last);
}
